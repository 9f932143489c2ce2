module github.com/gonogo/gonogo

go 1.26.0

require (
	github.com/VictoriaMetrics/metrics v1.44.0
	github.com/aymanbagabas/go-udiff v0.4.1
	github.com/gorilla/websocket v1.5.3
	github.com/mattn/go-shellwords v1.0.12
	github.com/sethvargo/go-envconfig v1.4.3
	github.com/slack-go/slack v0.35.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.10
	github.com/yuin/goldmark v1.8.7
	go.etcd.io/bbolt v1.5.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sync v0.24.0
	golang.org/x/term v0.47.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
