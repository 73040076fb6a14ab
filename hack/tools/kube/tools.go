//go:build tools

// Package kube pins the Kubernetes control-plane binaries the local test
// environment builds from source (kube-apiserver, kube-controller-manager).
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)
