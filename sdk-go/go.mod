module github.com/a3s-lab/code-bridge/sdk-go

go 1.22
