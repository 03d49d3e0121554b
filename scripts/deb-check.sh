#!/usr/bin/env bash
# scripts/deb-check.sh DEB: what `make deb` runs on the package it built. lintian must find no
# error; then apt-get installs it as a user would (its Depends resolved from the archive),
# /usr/bin/monsoon runs, man finds its page, and bash, zsh and fish each find its completion
# and complete a command with it; then `apt-get remove --purge` must leave none of the paths it
# installed that were not there before. Installs and removes packages: as root, or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(realpath "${1:?usage: scripts/deb-check.sh monsoon_VERSION_ARCH.deb}")
sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo
apt() { $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }
fail() { echo "deb-check.sh: $*" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
work=$(mktemp -d /tmp/monsoon-deb-check.XXXXXX)
installed=""
# A check that stops half-way still takes its package away.
cleanup() { [ -z "$installed" ] || apt remove --purge -y -qq monsoon >/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# The check ends by purging the package: one already installed here is someone's, not ours.
if dpkg-query -W -f='${Status}' monsoon 2>/dev/null | grep -q "install ok installed"; then
    fail "monsoon $(dpkg-query -W -f='${Version}' monsoon) is installed here as a package, and the check would remove it.
Install the new one with: sudo apt-get install $deb
or remove the old one (sudo apt-get remove monsoon) and run make deb again."
fi

echo "== lintian $(basename "$deb")"
# Shown with the tags the package overrides, which lintian then counts in its exit status (2):
# the verdict is its lines, where an overridden error is an O:, not an E:.
status=0; lintian --display-info --show-overrides "$deb" > "$work/lintian" 2>&1 || status=$?
cat "$work/lintian"
[ "$status" = 0 ] || [ "$status" = 2 ] || fail "lintian failed (status $status)"
! grep -q '^E: ' "$work/lintian" || fail "lintian found errors"

# The paths the package holds, and which of them exist before it is installed (/usr, /usr/bin...).
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./|/|; s|/$||' | grep -v '^/\?$' | sort > "$work/contents"
while read -r path; do if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi; done < "$work/contents" > "$work/before"

echo "== apt-get install $(basename "$deb")"
installed=yes
apt install -y -qq "$deb" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "apt-get install failed"; }
dpkg-query -W -f='${Status} ${Version}\n' monsoon | grep -qx "install ok installed $version" || fail "monsoon $version is not installed"
dpkg -L monsoon | grep -v '^/\.$' | sort > "$work/listed"
diff -u "$work/contents" "$work/listed" || fail "dpkg -L does not list what the package holds"

# /usr/bin first, the shells' and man's own search paths, and no one's home or configuration: a
# monsoon under /usr/local (`make install`) or a user's completion must not answer for the package.
export PATH=/usr/bin:/bin MONSOON_HOME="$work/home" XDG_DATA_DIRS=/usr/share XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"
[ "$(monsoon --version)" = "$version" ] || fail "monsoon --version says $(monsoon --version), the package $version"
echo "monsoon --version: $version"
man -w monsoon > /dev/null || fail "man -w monsoon finds no page"
man -aw monsoon | grep -qx /usr/share/man/man1/monsoon.1.gz || fail "man does not find /usr/share/man/man1/monsoon.1.gz: $(man -aw monsoon)"
MANWIDTH=80 man -P cat -l /usr/share/man/man1/monsoon.1.gz 2>&1 | grep -qx SYNOPSIS || fail "man does not render the page"
echo "man -w monsoon: $(man -aw monsoon | grep /usr/share/man)"

bash_completion=$(bash --norc --noprofile -c '
    source /usr/share/bash-completion/bash_completion
    __load_completion monsoon
    complete -p monsoon
    COMP_WORDS=(monsoon ge); COMP_CWORD=1; _monsoon; printf "%s\n" "${COMPREPLY[@]}"')
[[ $bash_completion == complete\ *-F\ _monsoon\ monsoon$'\nget' ]] || fail "bash: $bash_completion"
echo "bash: $(head -1 <<< "$bash_completion"), monsoon ge<Tab>: get"
# zsh -f: no user's .zshrc, and Debian's own fpath, which has /usr/share/zsh/vendor-completions.
zsh_completion=$(zsh -f -c 'autoload -U compinit; compinit -u -D; print -r -- $_comps[monsoon] ${^fpath}/_monsoon(N)')
[[ $zsh_completion == _monsoon\ *"/usr/share/zsh/vendor-completions/_monsoon"* ]] || fail "zsh does not find _monsoon: $zsh_completion"
echo "zsh: _monsoon, from /usr/share/zsh/vendor-completions"
# Not --no-config, which skips the vendor completions too.
fish_completion=$(fish -c 'complete -C "monsoon ge"')
[[ $fish_completion == get$'\t'* ]] || fail "fish: $fish_completion"
echo "fish: monsoon ge<Tab>: $fish_completion"
[ ! -e "$work/home" ] || fail "a completion created a home"

echo "== apt-get remove --purge monsoon"
apt remove --purge -y -qq monsoon > "$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "apt-get remove failed"; }
installed=""
if dpkg-query -W -f='${Status}' monsoon 2>/dev/null | grep -q "installed"; then fail "monsoon is still installed"; fi
left=$(comm -23 "$work/listed" "$work/before" | while read -r path; do if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi; done)
[ -z "$left" ] || fail "left behind after the purge: $left"
echo "Purged: none of the $(comm -23 "$work/listed" "$work/before" | wc -l) paths it added is left."
