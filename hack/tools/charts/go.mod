module github.com/cozyplane/cozyplane/hack/tools/charts

go 1.26

require gopkg.in/yaml.v3 v3.0.1
