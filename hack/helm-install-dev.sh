#!/usr/bin/env bash
# make helm-install: installs charts/llmkube on the cluster of a running `make run` (its real
# node), as docs/install.md installs it on any cluster, and hands that cluster over from make run's
# operator to the chart's. docs/dev-cluster.md says what it does and why.
#
# Three things stand between `helm install` and make run's cluster, and this script does each:
#   1. The CRDs exist already (make run installed them from config/crd/bases), without Helm's
#      ownership metadata, so Helm refuses to import them. They get the label and annotations
#      Helm documents for adopting an object into a release: the release then owns and upgrades
#      them. The same two commands adopt CRDs anyone applied by hand (docs/install.md).
#   2. The images: make run's node holds the images `make images` built (localhost/llmkube/...,
#      tagged with the version the chart defaults to), and no registry.
#   3. Two operators: make run's holds the chart's Lease in llmkube-system; on seeing the chart's
#      Deployment it stops reconciling and hands the Lease over, so the chart's operator (waiting
#      as a standby until then) is the only one that writes.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.dev/kubeconfig}"
release="${RELEASE:-llmkube}"
ns="${NAMESPACE:-llmkube-system}"
node=llmkube-dev
lease=llmkube-operator.inference.llmkube.dev
helm() { go tool -modfile=hack/tools/go.mod helm "$@"; }

if ! kubectl get --raw /readyz >/dev/null 2>&1; then
	echo "make helm-install: no cluster answers at KUBECONFIG=$KUBECONFIG: start \`make run\` in another shell first" >&2
	exit 1
fi
if ! kubectl get node "$node" >/dev/null 2>&1; then
	echo "make helm-install: the cluster has no real node ($node): the chart's operator would be a pod that never runs on KWOK's fake nodes. make run gets the real node where this machine can run containers (docs/real-node.md)" >&2
	exit 1
fi

for crd in $(kubectl get crd -o name | grep '\.inference\.llmkube\.dev$'); do
	owner="$(kubectl get "$crd" -o jsonpath='{.metadata.annotations.meta\.helm\.sh/release-name}/{.metadata.annotations.meta\.helm\.sh/release-namespace}')"
	if [ "$owner" != "/" ] && [ "$owner" != "$release/$ns" ]; then
		echo "make helm-install: $crd belongs to the Helm release $owner already; not adopting it into $release/$ns" >&2
		exit 1
	fi
	kubectl label --overwrite "$crd" app.kubernetes.io/managed-by=Helm >/dev/null
	kubectl annotate --overwrite "$crd" meta.helm.sh/release-name="$release" meta.helm.sh/release-namespace="$ns" >/dev/null
done

helm upgrade --install "$release" charts/llmkube -n "$ns" --create-namespace --wait --timeout 5m \
	--set image.repository=localhost/llmkube/operator \
	--set routerProxy.image.repository=localhost/llmkube/router-proxy "$@"

# The handover ends when the chart's pod holds the Lease (its holder identity starts with the pod's
# name, which is its host name).
pods="$(kubectl -n "$ns" get pods -l app.kubernetes.io/instance="$release",app.kubernetes.io/component=operator -o jsonpath='{.items[*].metadata.name}')"
for _ in $(seq 1 60); do
	holder="$(kubectl -n "$ns" get lease "$lease" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)"
	for pod in $pods; do
		if [ "${holder%%_*}" = "$pod" ]; then
			echo "The chart's operator $ns/$pod leads (Lease $ns/$lease); make run's operator has stood down. Ctrl-C in make run's shell still stops the whole cluster."
			exit 0
		fi
	done
	sleep 2
done
echo "make helm-install: the chart is installed, but its operator ($pods) does not hold the Lease $ns/$lease after 2 minutes (holder: ${holder:-none}); is make run's operator still running, and does its log say it stood down?" >&2
exit 1
