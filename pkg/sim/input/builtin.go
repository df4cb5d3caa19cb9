package input

import _ "embed"

//go:embed builtin/borrowing.yaml
var builtinScenario []byte

// BuiltinScenario is the scenario kai-sim runs without arguments.
func BuiltinScenario() []byte { return append([]byte(nil), builtinScenario...) }
