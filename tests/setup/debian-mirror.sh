# shellcheck shell=bash
# Sourced by the set-up scripts: debian_mirror WHO prints the Debian
# mirror this host's apt uses (deb822 sources first, then the one-line
# format), or says on stderr, as WHO, that there is none and returns 1.
debian_mirror() {
	local m
	m=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1)
	[[ -n $m ]] || m=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
	[[ -n $m ]] || { echo "$1: no Debian mirror configured in /etc/apt" >&2; return 1; }
	echo "$m"
}
