#!/bin/sh
# Makes what the .deb and .rpm hold beside the binary and the files of
# packaging/: the man pages gzipped (as Debian and Fedora install them)
# and the shell completions, which objgc writes itself. goreleaser runs it
# before its builds (.goreleaser.yml, before.hooks), after go generate has
# refreshed docs/man. Output: packaging/build/ (not committed).
set -eu
cd "$(dirname "$0")/.."
out=packaging/build
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
for page in docs/man/*.1; do
  # -n: no name or time stamp in the header, so the same page gives the
  # same bytes.
  gzip -9 -n -c "$page" > "$out/man/${page##*/}.gz"
done
CGO_ENABLED=0 go build -trimpath -o "$out/objgc" .
"$out/objgc" completion bash > "$out/completions/objgc.bash"
"$out/objgc" completion zsh > "$out/completions/_objgc"
"$out/objgc" completion fish > "$out/completions/objgc.fish"
rm "$out/objgc"
