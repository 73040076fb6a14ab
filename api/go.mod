module github.com/cozyplane/cozyplane/api

go 1.26
