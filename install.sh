#!/usr/bin/env bash
# Installs vagent from this checkout: dependencies (native modules built from source when no
# prebuilt binary can be downloaded), the build, and a `vagent` command on the PATH.
# Safe to run again: it skips what is already done.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD

say() { printf '%s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || fail "Node.js 20.19 or newer is required (node not found)"
command -v npm >/dev/null || fail "npm is required (npm not found)"
node -e '
  const [maj, min] = process.versions.node.split(".").map(Number);
  if (maj < 20 || (maj === 20 && min < 19)) { console.error("install.sh: Node.js >= 20.19 is required, found " + process.version); process.exit(1); }
' || exit 1

# Native modules compile against Node's headers. node-gyp downloads them unless told where
# they are; offline that fails, so point it at the headers installed beside this node.
nodedir="${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}"
if [ -z "$nodedir" ] || [ "$nodedir" = "undefined" ] || [ "$nodedir" = "null" ]; then
  prefix="$(cd "$(dirname "$(node -p 'process.execPath')")/.." && pwd)"
  if [ -f "$prefix/include/node/node_api.h" ] && [ -f "$prefix/include/node/common.gypi" ]; then
    export npm_config_nodedir="$prefix"
    say "native modules: using Node headers in $prefix/include/node"
  fi
fi

# 1. Dependencies. `npm ci` installs exactly package-lock.json; better-sqlite3 downloads a
#    prebuilt binary when it can and otherwise compiles from source (needs python3, make, g++).
stamp="node_modules/.vagent-install-stamp"
want="$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(process.version+process.arch).digest("hex"))')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  say "dependencies: up to date"
else
  say "dependencies: npm ci (native modules may compile from source; this can take a minute)"
  npm ci --no-audit --no-fund
  printf '%s' "$want" > "$stamp"
fi
if ! node -e 'const D=require("better-sqlite3"); new D(":memory:").close()' 2>/dev/null; then
  say "dependencies: better-sqlite3 does not load for $(node --version); rebuilding it from source"
  npm rebuild better-sqlite3 --build-from-source
  node -e 'const D=require("better-sqlite3"); new D(":memory:").close()' || fail "better-sqlite3 still does not load; install python3, make and g++ and run ./install.sh again"
fi

# 2. Build TypeScript to dist/.
say "build: tsc"
npm run --silent build

# 3. Put `vagent` on the PATH: npm's global bin when writable, else ~/.local/bin.
bindir="$(npm prefix -g 2>/dev/null)/bin"
if ! { mkdir -p "$bindir" 2>/dev/null && [ -w "$bindir" ]; }; then
  bindir="$HOME/.local/bin"
  mkdir -p "$bindir"
fi
ln -sf "$ROOT/bin/vagent" "$bindir/vagent"
say "installed: $bindir/vagent -> $ROOT/bin/vagent"
case ":$PATH:" in
  *":$bindir:"*) say "vagent $("$bindir/vagent" --version) is ready. Start it with: vagent serve" ;;
  *) say "note: $bindir is not on your PATH; add it with:  export PATH=\"$bindir:\$PATH\"" ;;
esac
