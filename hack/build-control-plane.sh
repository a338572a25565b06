#!/usr/bin/env bash
# Builds the control plane that the integration suite and `make run` use from source through the
# Go module proxy, into the directory given as $1:
#   - kube-apiserver and etcd: every integration spec;
#   - kube-controller-manager and kube-scheduler (same Kubernetes version) and KWOK with its stage
#     files: the fuller cluster of `make run` (internal/devcluster), where Deployments get pods on
#     fake GPU nodes.
#
# Why from source: setup-envtest downloads prebuilt binaries from a bucket that is not reachable here;
# the Go module proxy is. The versions come from test/envtest/tools/go.mod, and the directory name
# carries the Kubernetes and etcd versions, so a machine builds each version once and every later
# run reuses the binaries. Each binary is built only when it is missing, so a cache made before the
# cluster binaries existed gains them without rebuilding kube-apiserver; KWOK's version is kept in
# kwok.version beside it and a change rebuilds it alone.
set -euo pipefail

dest=${1:?usage: build-control-plane.sh DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/test/envtest/tools"
k8s=$(sed -n 's/^\tk8s.io\/kubernetes \(v[^ ]*\)$/\1/p' "$tools/go.mod")
etcd=$(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 \(v[^ ]*\)$/\1/p' "$tools/go.mod")
kwok=$(sed -n 's/^\tsigs.k8s.io\/kwok \(v[^ ]*\)$/\1/p' "$tools/go.mod")

# The version variables make the Kubernetes binaries report their real version to clients
# (kubectl, discovery).
major=${k8s#v}; major=${major%%.*}
minor=${k8s#v*.}; minor=${minor%%.*}
k8sflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

have() { [[ -x "$dest/$1" ]]; }
todo_etcd=; todo_k8s=(); todo_kwok=
have etcd || todo_etcd=1
for b in kube-apiserver kube-controller-manager kube-scheduler; do have "$b" || todo_k8s+=("$b"); done
if ! have kwok || [[ ! -f "$dest/kwok-stages.yaml" ]] || [[ "$(cat "$dest/kwok.version" 2>/dev/null)" != "$kwok" ]]; then
  todo_kwok=1
fi
if [[ -z "$todo_etcd" && ${#todo_k8s[@]} -eq 0 && -z "$todo_kwok" ]]; then
  exit 0
fi

cat <<MSG
==> Building the control plane from source into $dest
    missing: ${todo_etcd:+etcd $etcd }${todo_k8s[*]:+${todo_k8s[*]} $k8s }${todo_kwok:+kwok $kwok}
    This happens once per machine and version, and takes minutes: docs/dev-cluster.md
    ("How long the first build takes") has the measured figures. Later runs reuse the binaries.
MSG

start=$(date +%s)
mkdir -p "$dest"
tmp=$(mktemp -d "${dest%/}.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(
  cd "$tools"
  if [[ -n "$todo_etcd" ]]; then
    echo "    etcd"
    go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
  fi
  if [[ ${#todo_k8s[@]} -gt 0 ]]; then
    # One go build for all of them: they share most packages, and one invocation compiles each
    # shared package once and links the binaries in parallel.
    echo "    ${todo_k8s[*]}"
    pkgs=(); for b in "${todo_k8s[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    go build -trimpath -ldflags "$k8sflags" -o "$tmp/" "${pkgs[@]}"
  fi
  if [[ -n "$todo_kwok" ]]; then
    echo "    kwok"
    go build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok
    # KWOK does nothing without stages; these are the ones `kwokctl create cluster` uses (nodes
    # become Ready and renew a Lease; pods become Running and Ready, finish, and are deleted),
    # taken from the module at the version built.
    src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage
    for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
      echo "---"; cat "$src/$f"
    done > "$tmp/kwok-stages.yaml"
    echo "$kwok" > "$tmp/kwok.version"
  fi
)
# envtest looks for kubectl beside the other binaries; use the machine's own.
if command -v kubectl >/dev/null 2>&1 && [[ ! -e "$dest/kubectl" ]]; then
  ln -sf "$(command -v kubectl)" "$tmp/kubectl"
fi
# Each file lands whole (a rename within one file system), so an interrupted build leaves no half
# binary that a later run would take for a finished one; kwok.version moves last.
for f in "$tmp"/*; do
  [[ "$(basename "$f")" == kwok.version ]] || mv -f "$f" "$dest/"
done
[[ -f "$tmp/kwok.version" ]] && mv -f "$tmp/kwok.version" "$dest/"
echo "==> Control plane ready in $(( $(date +%s) - start ))s: $dest"
