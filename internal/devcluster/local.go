/*
Copyright 2026 The LLMKube Authors.

Licensed under the Apache License, Version 2.0.
*/

package devcluster

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmkube/operator/internal/node"
)

// The real node of `make run`. It has a name, a state directory and a link of its own, apart from
// the end-to-end suite's (llmkube-e2e, 198.19.253.0/30): the node's lock refuses a second `make
// run` on one machine instead of letting two kubelets share one name.
const (
	LocalNodeName     = "llmkube-dev"
	LocalNodeStateDir = "/var/lib/llmkube/" + LocalNodeName
)

// LocalNodeLink is the /30 joining `make run`'s node to the machine.
var LocalNodeLink = netip.MustParsePrefix("198.19.254.0/30")

// ImageBaseName is the name containerd gives every image of `make images` it loads:
// <ImageBaseName>/<repository>:<tag>.
const ImageBaseName = "localhost/llmkube"

// LocalImages are the OCI layouts `make images BASE_IMAGE=local PLATFORMS=linux/amd64` writes to
// dir (build/images): the sandbox (pause) and the images pods of the local cluster run.
func LocalImages(dir string) (sandbox node.Image, images []node.Image) {
	return localImage(dir, "pause"), []node.Image{localImage(dir, "operator"), localImage(dir, "router-proxy"), localImage(dir, "model-simulator")}
}

func localImage(dir, repo string) node.Image {
	return node.Image{Layout: filepath.Join(dir, repo), BaseName: ImageBaseName + "/" + repo}
}

// RealNodeMissing says what this machine lacks for `make run`'s real node: nil when the machine
// can run containers (CanRunContainers), $KUBEBUILDER_ASSETS holds the node's binaries (`make
// node-bin`) and imagesDir holds the images (`make images`).
//
// Note: `make run` builds the binaries and the images itself when CanRunContainers passes, so in
// `make run` what remains missing here is what could not be built; the reason is printed on one
// line, and the cluster falls back to KWOK's fake nodes.
func RealNodeMissing(imagesDir string) error {
	if err := CanRunContainers(); err != nil {
		return err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	var missing []string
	for _, f := range NodeAssets {
		if _, err := os.Stat(filepath.Join(assets, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the node's binaries are not built (%s missing in %s: make node-bin)", strings.Join(missing, ", "), assets)
	}
	sandbox, images := LocalImages(imagesDir)
	for _, im := range append([]node.Image{sandbox}, images...) {
		if _, err := im.Ref(); err != nil {
			return fmt.Errorf("the images are not built (%s: make images BASE_IMAGE=local PLATFORMS=linux/amd64)", im.Layout)
		}
	}
	return nil
}

// StartLocal starts `make run`'s cluster: with the real node when RealNodeMissing finds nothing
// missing and kwokOnly is false, else with KWOK's fake nodes. It returns the cluster and one line
// that says which nodes it has, and why not the real one.
func StartLocal(crdDir, kubeconfigPath, imagesDir string, kwokOnly bool) (*Cluster, string, error) {
	why := errors.New("--dev-node=kwok")
	if !kwokOnly {
		why = RealNodeMissing(imagesDir)
	}
	if why != nil {
		c, err := Start(crdDir, kubeconfigPath)
		return c, fmt.Sprintf("Nodes: KWOK's fake GPU nodes, no container runs (no real node: %v).", why), err
	}
	sandbox, images := LocalImages(imagesDir)
	c, err := StartWithNode(crdDir, kubeconfigPath, NodeOptions{
		Name: LocalNodeName, StateDir: LocalNodeStateDir, Link: LocalNodeLink, Sandbox: sandbox, Images: images,
	})
	return c, fmt.Sprintf("Node: %s, a real node on this machine (kubelet, containerd, runc); its pods run the images of %s.", LocalNodeName, imagesDir), err
}

// RouterProxyImage is the router-proxy image the cluster's node holds, for ModelRouters that name
// none; empty with KWOK's nodes, which run no image.
func (c *Cluster) RouterProxyImage(imagesDir string) string {
	if c.node == nil {
		return ""
	}
	ref, _ := localImage(imagesDir, "router-proxy").Ref()
	return ref
}
