#!/usr/bin/env bash
# Builds the control plane that the integration suite and `make run` use (kube-apiserver and etcd)
# from source through the Go module proxy, into the directory given as $1.
#
# Why from source: setup-envtest downloads prebuilt binaries from a bucket that is not reachable here;
# the Go module proxy is. The versions come from test/envtest/tools/go.mod, and the directory name
# carries them, so a machine builds each version once and every later run reuses the binaries.
set -euo pipefail

dest=${1:?usage: build-control-plane.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/test/envtest/tools"
k8s=$(sed -n 's/^\tk8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$tools/go.mod")
etcd=$(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[^ ]*\)$/\1/p' "$tools/go.mod")

if [[ -x "$dest/kube-apiserver" && -x "$dest/etcd" ]]; then
  exit 0
fi

cat <<MSG
==> Building the test control plane from source: kube-apiserver $k8s and etcd $etcd
    into $dest
    This happens once per machine and version, and takes about 8-10 minutes on 2 cores
    (most of it compiling kube-apiserver). Later runs reuse the binaries.
MSG

start=$(date +%s)
mkdir -p "$(dirname "$dest")"
tmp=$(mktemp -d "${dest%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The version variables make kube-apiserver report its real version to clients (kubectl, discovery).
major=${k8s#v}; major=${major%%.*}
minor=${k8s#v*.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
(
  cd "$tools"
  echo "    [1/2] etcd"
  go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
  echo "    [2/2] kube-apiserver"
  go build -trimpath -ldflags "$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
)
# envtest looks for kubectl beside the other binaries; use the machine's own.
if command -v kubectl >/dev/null 2>&1; then
  ln -sf "$(command -v kubectl)" "$tmp/kubectl"
fi
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
echo "==> Control plane ready in $(( $(date +%s) - start ))s: $dest"
