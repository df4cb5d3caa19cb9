// Package plugins builds the registry of every plugin this scheduler implements. Each plugin
// lives in its own subpackage and exports its Name and a New factory.
package plugins
