#!/usr/bin/env bash
# Installs vagent from this checkout: dependencies (native modules built from source when no
# prebuilt binary can be downloaded), the build, and a `vagent` command on the PATH.
# Safe to run again: it skips what is already done (dependencies by package-lock.json, the
# build by a stamp over src/, tsconfig*.json, package.json and package-lock.json).
#
#   ./install.sh           install, or bring this checkout's install up to date
#   ./install.sh --force   also repoint a `vagent` command that belongs to another checkout
# The last line on stdout is the command that starts this checkout's daemon.
set -euo pipefail
FROM="$PWD"
cd "$(dirname "$0")"

say() { printf '%s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) fail "unknown option $arg (see ./install.sh --help)" ;;
  esac
done

command -v node >/dev/null || fail "Node.js 20.19 or newer is required (node not found)"
command -v npm >/dev/null || fail "npm is required (npm not found)"
node -e '
  const [maj, min] = process.versions.node.split(".").map(Number);
  if (maj < 20 || (maj === 20 && min < 19)) { console.error("install.sh: Node.js >= 20.19 is required, found " + process.version); process.exit(1); }
' || exit 1

# Native modules compile against Node's headers. node-gyp downloads them unless told where
# they are; offline that fails, so point it at the headers installed beside this node.
# npm 11 warns about any nodedir it is given (npm_config_nodedir, --nodedir): node-gyp reads
# npm_package_config_node_gyp_nodedir too, which npm leaves alone.
nodedir="$(npm config get nodedir 2>/dev/null || true)"
if [ -z "$nodedir" ] || [ "$nodedir" = "undefined" ] || [ "$nodedir" = "null" ]; then
  prefix="$(cd "$(dirname "$(node -p 'process.execPath')")/.." && pwd)"
  if [ -f "$prefix/include/node/node_api.h" ] && [ -f "$prefix/include/node/common.gypi" ]; then
    export npm_package_config_node_gyp_nodedir="$prefix"
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

# 2. Build TypeScript to dist/, unless dist/ was built from exactly these sources (the stamp of
#    tools/build-stamp.mjs, written after every `npm run build`; the dev fakes use it too).
if node tools/build-stamp.mjs --check; then
  say "build: up to date (src/, tsconfig*.json, package.json and package-lock.json unchanged)"
else
  say "build: tsc"
  npm run --silent build
  # npm's postbuild writes the stamp too; written here as well, so that an npm set to skip
  # scripts (ignore-scripts) still leaves a stamp and the next run skips the build.
  node tools/build-stamp.mjs --write
fi

# 3. The embedded speech recogniser: Debian's pocketsphinx and its English model (BSD). Installed
#    with apt-get where it and root are available; otherwise say how. vagent runs without them,
#    with speech recognition off (said at start-up and on /v1/health). Nothing else is fetched.
ps_model="${VAGENT_POCKETSPHINX_MODEL:-/usr/share/pocketsphinx/model/en-us}"
ps_hint="sudo apt-get install pocketsphinx pocketsphinx-en-us"
have_pocketsphinx() { command -v pocketsphinx_continuous >/dev/null 2>&1 && [ -f "$ps_model/en-us/mdef" ] && [ -f "$ps_model/cmudict-en-us.dict" ]; }
if have_pocketsphinx; then
  say "speech recognition: pocketsphinx is installed"
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  say "speech recognition: apt-get install pocketsphinx pocketsphinx-en-us"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have no package lists yet: update them once if the first try fails.
  apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us \
    || { apt-get update && apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us; } \
    || true
  if have_pocketsphinx; then
    say "speech recognition: pocketsphinx installed"
  else
    printf '%s\n' "install.sh: note: pocketsphinx could not be installed; speech recognition is off until it is." \
      "  Install it with: $ps_hint" >&2
  fi
else
  printf '%s\n' "install.sh: note: pocketsphinx is not installed, so speech recognition is off." \
    "  Install it with: $ps_hint   (Debian/Ubuntu; then restart vagent)" >&2
fi

# 4. tmux, for the test that runs `vagent dashboard` on a real terminal (test/cli/dashboard-tmux.test.ts);
#    vagent itself does not need it. Installed with apt-get where it and root are available,
#    like pocketsphinx above; otherwise say how.
tmux_hint="sudo apt-get install tmux"
if command -v tmux >/dev/null 2>&1; then
  say "tests: tmux is installed"
elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  say "tests: apt-get install tmux"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends tmux \
    || { apt-get update && apt-get install -y --no-install-recommends tmux; } \
    || true
  if command -v tmux >/dev/null 2>&1; then
    say "tests: tmux installed"
  else
    printf '%s\n' "install.sh: note: tmux could not be installed; the dashboard's terminal test fails until it is." \
      "  Install it with: $tmux_hint" >&2
  fi
else
  printf '%s\n' "install.sh: note: tmux is not installed; vagent runs without it, but the dashboard's terminal test needs it." \
    "  Install it with: $tmux_hint   (Debian/Ubuntu; brew install tmux on macOS)" >&2
fi

# 5. Put `vagent` on the PATH and end with the command that starts this checkout's daemon
#    (`vagent serve`, or `bin/vagent serve` when `vagent` on the PATH is another one's).
link_args=(--from "$FROM")
[ "$force" = 1 ] && link_args+=(--force)
exec bash tools/link-vagent.sh "${link_args[@]}"
