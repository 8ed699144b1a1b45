#!/usr/bin/env bash
# install.sh's last step: puts this checkout's `vagent` on the PATH, then ends with one line on
# stdout saying exactly which command starts this checkout's daemon: `vagent serve` when `vagent`
# on the PATH is this checkout's, else `bin/vagent serve` (with the reason on stderr).
#
#   tools/link-vagent.sh [--force] [--from DIR]
#
# The link goes in npm's global bin when writable (npm prefix -g, so npm_config_prefix moves
# it), else ~/.local/bin. A `vagent` there that is not this checkout's (another checkout, another
# install) is left alone, with a note naming it (exit 0: this checkout is installed), unless
# --force says to replace it; a link to a checkout that is gone is replaced, saying so.
# --from: the directory install.sh was run from, so that the command printed works there.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '%s\n' "$*"; }
note() { printf '%s\n' "$@" >&2; }

force=0
from="$PWD"
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --from) from="$2"; shift ;;
    *) note "link-vagent.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done

bindir="$(npm prefix -g 2>/dev/null)/bin"
if ! { mkdir -p "$bindir" 2>/dev/null && [ -w "$bindir" ]; }; then
  bindir="$HOME/.local/bin"
  mkdir -p "$bindir"
fi
link="$bindir/vagent"
target="$ROOT/bin/vagent"
if [ -L "$link" ] && [ "$(readlink "$link")" = "$target" ]; then
  say "installed: $link -> $target (already)"
elif [ -L "$link" ] || [ -e "$link" ]; then
  if [ -L "$link" ]; then
    old="$(readlink "$link")"
    # A link to a checkout that is gone helps nobody: it is repointed (saying so) without --force.
    [ -e "$link" ] || { old="$old (missing)"; force=1; }
    what="a link to $old"
  else
    what="a file that is not a link (another vagent install?)"
  fi
  if [ "$force" = 1 ]; then
    ln -sfn "$target" "$link"
    say "repointed: $link was $what; now -> $target"
  else
    # This checkout is installed all the same; only the command on the PATH stays as it was.
    note "install.sh: note: $link is $what, not this checkout's $target." \
      "  Left alone. To point it at this checkout, run: ./install.sh --force"
  fi
else
  ln -s "$target" "$link"
  say "installed: $link -> $target"
fi

# Which `vagent` a shell with this PATH runs (another one may come first on the PATH, too).
# (Node resolves the links: `readlink -f` is not on every system install.sh runs on.)
real() { node -e 'process.stdout.write(require("fs").realpathSync(process.argv[1]))' "$1" 2>/dev/null || true; }
found="$(command -v vagent 2>/dev/null || true)"
if [ -n "$found" ] && [ "$(real "$found")" = "$(real "$target")" ]; then
  run="vagent"
else
  if [ "$from" = "$ROOT" ]; then run="bin/vagent"; else run="$target"; fi
  if [ -z "$found" ]; then
    note "install.sh: note: $bindir is not on your PATH; add it with:  export PATH=\"$bindir:\$PATH\""
  else
    note "install.sh: note: \`vagent\` on your PATH is $found, not this checkout's; run this checkout's as $run," \
      "  or put it first on the PATH in this shell:  export PATH=\"$ROOT/bin:\$PATH\""
  fi
fi
say "$("$target" --version 2>/dev/null || printf vagent) is ready. Start it with: $run serve"
