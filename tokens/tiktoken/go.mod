module github.com/nous-go/nous/tokens/tiktoken

go 1.26

require (
	github.com/nous-go/nous v0.0.0
	github.com/tiktoken-go/tokenizer v0.10.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
)

replace github.com/nous-go/nous => ../..
