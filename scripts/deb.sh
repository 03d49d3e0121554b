#!/usr/bin/env bash
# scripts/deb.sh [BIN]: builds monsoon_<version>_<arch>.deb here from a build of monsoon
# (default the release build), with Debian's own tools: `make install-files` puts the binary, the
# manual page and the completions in a staging tree under .build/deb, dpkg-shlibdeps turns the
# shared libraries the binary links into the Depends line (plus libcurl, libpq and libxml2, which
# monsoon opens when it first needs them rather than linking them), dpkg-gencontrol writes the control
# file, and dpkg-deb packs it (owned by root without fakeroot).
#
# The version is what the binary itself prints, so the package and `monsoon --version` agree. It
# is a native package (no Debian revision): Monsoon packages itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-.build/release/monsoon}
[ -x "$bin" ] || { echo "deb.sh: $bin is missing: run 'make deb' (it builds it)" >&2; exit 1; }
version=$("$bin" --version)
arch=$(dpkg --print-architecture)
# The project names no maintainer: a placeholder until it does.
maintainer=${DEB_MAINTAINER:-Monsoon developers <monsoon@localhost>}
deb="monsoon_${version}_${arch}.deb"
# The last commit's time dates the manual page, the changelog and the files in the package: the
# package tells which sources it holds, not when it was built (a copy without git: now).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

stage=.build/deb
root=$stage/root
doc=$root/usr/share/doc/monsoon
rm -rf "$stage"
# A umask such as 077 would leave the tree unreadable to users once installed.
umask 022
mkdir -p "$stage/debian" "$root/DEBIAN" "$doc"

# Where Debian's packages look: /usr/share/zsh/vendor-completions is in zsh's default fpath;
# bash-completion and fish read /usr/share already.
${MAKE:-make} -s install-files BIN="$bin" DESTDIR="$PWD/$root" PREFIX=/usr ZSH_FUNCTIONS=/usr/share/zsh/vendor-completions
# .comment holds only the compilers' version strings: dh_strip takes it out of Debian's binaries.
strip --remove-section=.comment "$root/usr/bin/monsoon"
gzip -9n "$root/usr/share/man/man1/monsoon.1"
install -m 644 README.md "$doc/README.md"
gzip -9n "$doc/README.md"

cat > "$stage/debian/changelog" <<EOF
monsoon ($version) unstable; urgency=medium

  * Built from the source tree with make deb.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
gzip -9n < "$stage/debian/changelog" > "$doc/changelog.gz"

# Machine-readable (DEP-5), the years from the first commit to this one. The tree has no license
# file and names no license: the file says so rather than invent one.
last_year=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
first_year=$(git log --max-parents=0 --format=%cd --date=format:%Y 2>/dev/null | sort | awk 'NR == 1') || true
years=${first_year:-$last_year}; [ "$years" = "$last_year" ] || years="$years-$last_year"
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: monsoon
Upstream-Contact: $maintainer

Files: *
Copyright: $years Monsoon developers
License: none-stated
 The Monsoon source tree this package was built from has no license file
 and names no license.
EOF
chmod 644 "$doc/copyright" "$doc/changelog.gz"

# A placeholder address, which mail cannot reach: lintian's two errors about it are expected
# until the project names a real one (DEB_MAINTAINER).
if [[ $maintainer == *@localhost\> ]]; then
    mkdir -p "$root/usr/share/lintian/overrides"
    printf 'monsoon: bogus-mail-host *\nmonsoon: bogus-mail-host-in-debian-changelog *\n' > "$root/usr/share/lintian/overrides/monsoon"
    chmod 644 "$root/usr/share/lintian/overrides/monsoon"
fi

# The two files dpkg-shlibdeps and dpkg-gencontrol read: no checked-in debian/ folder.
cat > "$stage/debian/control" <<EOF
Source: monsoon
Section: net
Priority: optional
Maintainer: $maintainer
Rules-Requires-Root: no

Package: monsoon
Architecture: any
Depends: \${shlibs:Depends}, libcurl4 (>= 7.85.0), libpq5 (>= 10), libxml2
Description: podcast archiver and resuming download engine
 Monsoon downloads whole podcast back catalogues, and any list of URLs,
 over libcurl. A pause, a dropped connection, a server error or Ctrl-C
 leaves a part file that the next run resumes with a Range request, and an
 error page never lands where an episode belongs.
 .
 It keeps a library of podcasts and their episodes in SQLite, archives
 feeds into folders with a SHA-256 manifest it can verify, records runs as
 WARC files, and can share one download queue between several machines
 through PostgreSQL.
EOF

(
    cd "$stage"
    dpkg-shlibdeps -Tdebian/substvars root/usr/bin/monsoon
    dpkg-gencontrol -pmonsoon -Proot -Tdebian/substvars -fdebian/files
)
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +

dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "Built $deb ($(du -h "$deb" | cut -f1)): $(dpkg-deb -f "$deb" Depends)"
