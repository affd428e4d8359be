// The dashboard's only way to the data: CloudKit Web Services requests to this server, with the
// tokens the user typed. Errors come back as CloudKit error objects; `call` throws them as
// ApiError so the page can show `serverErrorCode: reason`.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.reason ? `${body.serverErrorCode}: ${body.reason}` : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export class Api {
  constructor({ container, environment, database, apiToken, webAuthToken }) {
    Object.assign(this, { container, environment, database, apiToken, webAuthToken });
  }

  url(operation) {
    const q = new URLSearchParams({ ckAPIToken: this.apiToken });
    if (this.webAuthToken) q.set("ckWebAuthToken", this.webAuthToken);
    const c = encodeURIComponent(this.container);
    return `/database/1/${c}/${this.environment}/${this.database}/${operation}?${q}`;
  }

  // `headers`: more request headers (the management token of a schema promotion).
  async call(operation, body = {}, headers = {}) {
    const response = await fetch(this.url(operation), { method: "POST", body: JSON.stringify(body), headers });
    let json = null;
    try { json = await response.json(); } catch { /* not JSON: reported by status */ }
    if (!response.ok) throw new ApiError(response.status, json);
    return json;
  }
}
