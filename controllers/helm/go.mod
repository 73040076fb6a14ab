module github.com/cozyplane/cozyplane/controllers/helm

go 1.26

require (
	github.com/cozyplane/cozyplane/api v0.0.0
	github.com/cozyplane/cozyplane/pkg v0.0.0
	github.com/fluxcd/helm-controller/api v1.6.3
	k8s.io/apimachinery v0.36.3
	sigs.k8s.io/controller-runtime v0.24.1
)

replace (
	github.com/cozyplane/cozyplane/api => ../../api
	github.com/cozyplane/cozyplane/pkg => ../../pkg
)
