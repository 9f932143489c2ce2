module github.com/gonogo/gonogo

go 1.26.0

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/sethvargo/go-envconfig v1.4.3 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
	github.com/yuin/goldmark v1.8.7 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
)
