package apiwriter

import "encoding/json"

// mustJSON marshals a value of a type that always marshals.
func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}
