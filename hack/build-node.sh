#!/usr/bin/env bash
# Builds the real node's binaries from source through the Go module proxy, into the directory given
# as $1, the control plane's cache directory (hack/build-control-plane.sh), so one directory per
# Kubernetes and etcd version holds the whole cluster:
#   - kubelet and kube-proxy at the control plane's Kubernetes version (test/envtest/tools/go.mod):
#     a node never newer than its API server, as the version-skew policy asks;
#   - containerd 2.x with its runc shim and ctr, and the CNI plugins bridge, host-local, loopback
#     and portmap, at the versions of test/node/tools/go.mod, kept in containerd.version and
#     cni.version beside them so that a change rebuilds those alone; the plugins go to cni/.
# runc, iptables and conntrack are Debian's (apt-get install runc iptables conntrack).
#
# Each binary is built only when it is missing, as for the control plane.
set -euo pipefail

dest=${1:?usage: build-node.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
k8stools="$root/test/envtest/tools"
nodetools="$root/test/node/tools"
k8s=$(sed -n 's/^\tk8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$k8stools/go.mod")
containerd=$(sed -n 's/^\tgithub.com\/containerd\/containerd\/v2 \(v[^ ]*\)$/\1/p' "$nodetools/go.mod")
cni=$(sed -n 's/^\tgithub.com\/containernetworking\/plugins \(v[^ ]*\)$/\1/p' "$nodetools/go.mod")

major=${k8s#v}; major=${major%%.*}
minor=${k8s#v*.}; minor=${minor%%.*}
k8sflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

have() { [[ -x "$dest/$1" ]]; }
current() { [[ "$(cat "$dest/$1.version" 2>/dev/null)" == "$2" ]]; }
todo_k8s=(); todo_containerd=; todo_cni=
for b in kubelet kube-proxy; do have "$b" || todo_k8s+=("$b"); done
for b in containerd containerd-shim-runc-v2 ctr; do have "$b" || todo_containerd=1; done
current containerd "$containerd" || todo_containerd=1
for b in bridge host-local loopback portmap; do have "cni/$b" || todo_cni=1; done
current cni "$cni" || todo_cni=1
if [[ ${#todo_k8s[@]} -eq 0 && -z "$todo_containerd" && -z "$todo_cni" ]]; then
  exit 0
fi

cat <<MSG
==> Building the real node from source into $dest
    missing: ${todo_k8s[*]:+${todo_k8s[*]} $k8s }${todo_containerd:+containerd $containerd }${todo_cni:+cni-plugins $cni}
    This happens once per machine and version: docs/real-node.md has the measured times.
MSG

start=$(date +%s)
mkdir -p "$dest"
tmp=$(mktemp -d "${dest%/}.node.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cni"
if [[ ${#todo_k8s[@]} -gt 0 ]]; then
  echo "    ${todo_k8s[*]}"
  pkgs=(); for b in "${todo_k8s[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  (cd "$k8stools" && go build -trimpath -ldflags "$k8sflags" -o "$tmp/" "${pkgs[@]}")
fi
if [[ -n "$todo_containerd" ]]; then
  echo "    containerd containerd-shim-runc-v2 ctr"
  # Static and cgo-free: the btrfs, devmapper and zfs snapshotters need cgo or kernel parts this
  # node does not use (it uses overlayfs), so they are left out by their build tags.
  (cd "$nodetools" && CGO_ENABLED=0 go build -trimpath -tags "no_btrfs no_devmapper no_zfs urfave_cli_no_docs" \
    -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$containerd" -o "$tmp/" \
    github.com/containerd/containerd/v2/cmd/containerd \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr)
  echo "$containerd" > "$tmp/containerd.version"
fi
if [[ -n "$todo_cni" ]]; then
  echo "    cni-plugins: bridge host-local loopback portmap"
  (cd "$nodetools" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/cni/" \
    github.com/containernetworking/plugins/plugins/main/bridge \
    github.com/containernetworking/plugins/plugins/ipam/host-local \
    github.com/containernetworking/plugins/plugins/main/loopback \
    github.com/containernetworking/plugins/plugins/meta/portmap)
  echo "$cni" > "$tmp/cni.version"
fi
# Each file lands whole (a rename within one file system); the version files move last, so an
# interrupted build is rebuilt by the next run.
mkdir -p "$dest/cni"
for f in "$tmp"/cni/*; do [[ -e "$f" ]] && mv -f "$f" "$dest/cni/"; done
for f in "$tmp"/*; do
  [[ -f "$f" && "$f" != *.version ]] && mv -f "$f" "$dest/"
done
for f in "$tmp"/*.version; do [[ -e "$f" ]] && mv -f "$f" "$dest/"; done
echo "==> Real node ready in $(( $(date +%s) - start ))s: $dest"
