module github.com/nous-go/nous/tooltest/schemacheck

go 1.26

require (
	github.com/google/uuid v1.6.0
	github.com/nous-go/nous v0.0.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
)

require golang.org/x/text v0.14.0 // indirect

replace github.com/nous-go/nous => ../..
