#!/usr/bin/env bash
# Installs the Debian packages whose command is missing: each argument is command:package. The
# servers and tools the tests run for real and Go cannot build (redis-server, runc, iptables, ...)
# come from Debian; .ci/run, make test and make test-node call this with what each needs. It says
# on one line what it installs, and installs nothing when every command is there.
set -euo pipefail
need=""
for pair in "$@"; do
	command -v "${pair%%:*}" >/dev/null 2>&1 || need="$need ${pair#*:}"
done
[ -n "$need" ] || exit 0
if ! command -v apt-get >/dev/null 2>&1; then
	echo "missing:$need (no apt-get here: install them with this machine's package manager)" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "missing:$need (not root and no sudo: apt-get install$need)" >&2; exit 1; }
	sudo="sudo"
fi
echo "installing from Debian:$need" >&2
$sudo apt-get update -qq
# shellcheck disable=SC2086 # one word a package
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
