// Package schemacheck holds tests only: nous.SchemaOf of random Go types
// checked against encoding/json with a validator of the whole JSON Schema
// standard (draft 2020-12), which the root module, bound to the standard
// library, uuid and testify, cannot import. The JSON json.Marshal makes of
// random values of each type is valid under its schema, and every change
// to it that the schema takes, encoding/json reads into the type.
package schemacheck
