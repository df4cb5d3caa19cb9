// Package framework runs one scheduling cycle: it opens a Session on a snapshot with one
// frozen "now", lets the configured plugins register their hooks, runs the actions, and
// closes the session. interface.go lists every hook a plugin can register and how the answers
// of several plugins combine; session_plugins.go holds the registry of those hooks; Statement
// records the decisions of an action so they can be simulated, rolled back or committed.
package framework
