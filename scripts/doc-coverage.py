#!/usr/bin/env python3
# Public declarations with and without a /// doc comment, per library module.
#   scripts/doc-coverage.py [MODULE]   (with MODULE: list its undocumented declarations)
import re,sys,os,collections
tot=collections.Counter(); doc=collections.Counter(); missing=collections.defaultdict(list)
# A declaration: attributes, then public/open, then any further modifiers, then a declaration
# keyword. The keyword is required so that statements such as `open = nil` (a variable named
# `open`) are not counted.
MODIFIERS=(r'(?:(?:public|open|private|fileprivate|internal|package)(?:\(set\))?|static|class|final|'
           r'override|mutating|nonmutating|convenience|required|lazy|weak|unowned|dynamic|indirect|'
           r'nonisolated|isolated|consuming|borrowing|distributed)')
KEYWORDS=(r'(?:func|var|let|init|deinit|subscript|struct|class|enum|actor|protocol|extension|case|'
          r'typealias|associatedtype|macro|operator|precedencegroup)\b')
decl=re.compile(r'^\s*(@\w+(\(.*?\))?\s+)*(public|open)\s+(?!import)((?:'+MODIFIERS+r'\s+)*'+KEYWORDS+r'.*)')
for root,_,fs in os.walk('Sources'):
    for f in fs:
        if not f.endswith('.swift'): continue
        mod=root.split('/')[1]
        if mod in ('CirrusCLI','cirrus-logwriter','cirrus-logbench'): continue
        p=os.path.join(root,f); L=open(p).read().split('\n')
        for i,l in enumerate(L):
            m=decl.match(l)
            if not m: continue
            rest=m.group(4)
            if rest.startswith('extension'): continue
            j=i-1
            while j>=0 and (L[j].strip().startswith('@') or L[j].strip()=='' and False): j-=1
            prev=L[j].strip() if j>=0 else ''
            ok=prev.startswith('///') or prev.endswith('*/')
            tot[mod]+=1; doc[mod]+=ok
            if not ok: missing[mod].append(f"{p}:{i+1}: {l.strip()[:100]}")
T=sum(tot.values()); D=sum(doc.values())
for m in sorted(tot): print(f"{m:16} {doc[m]:4}/{tot[m]:4} {100*doc[m]//tot[m]}%")
print("total",D,T,100*D//T)
if len(sys.argv)>1:
    for l in missing[sys.argv[1]]: print(l)
