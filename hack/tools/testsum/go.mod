module github.com/cozyplane/cozyplane/hack/tools/testsum

go 1.26
