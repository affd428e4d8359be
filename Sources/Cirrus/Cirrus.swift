// Cirrus: the library users import — the façade (CirrusFacade: `Container`, `Database`, the
// backend protocols, `CirrusError`, access and subscription rules) with the embedded engine
// (CirrusEmbedded: `Container.open(at:)`, checkpoints, import, repair), re-exported, so that
// `import Cirrus` gives both, as it always did. The PostgreSQL engine (CirrusPostgres) builds on
// the façade alone.

@_exported import CirrusEmbedded
@_exported import CirrusFacade
