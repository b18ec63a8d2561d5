#!/bin/sh
# Makes what the .deb and .rpm hold beside the binary and the files of
# packaging/: the man pages gzipped (as Debian and Fedora install them)
# and the shell completions, which objgc writes itself. goreleaser runs it
# before its builds (.goreleaser.yml, before.hooks), after go generate has
# refreshed docs/man, with the version it builds; the .deb's changelog
# names it. Output: packaging/build/ (not committed).
set -eu
cd "$(dirname "$0")/.."
version=${1:?usage: packaging/prepare.sh VERSION}
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

# The .deb's changelog (Debian policy 4.4, 12.7), one entry for this
# version, dated by the commit: the version as nfpm writes it into the
# package (a pre-release after ~, so that it sorts before the release)
# with Debian revision 1 (release in .goreleaser.yml).
case $version in
*-*) debversion="${version%%-*}~${version#*-}-1" ;;
*) debversion="$version-1" ;;
esac
{
  echo "objgc ($debversion) unstable; urgency=medium"
  echo
  echo "  * objgc $version, built from commit $(git rev-parse --short=12 HEAD)."
  echo "    What changed: https://github.com/objgc/objgc/releases"
  echo
  echo " -- objgc maintainers <objgc@users.noreply.github.com>  $(git log -1 --format=%cD)"
} | gzip -9 -n > "$out/changelog.Debian.gz"
