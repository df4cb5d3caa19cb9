package victims

// VisitEveryNode makes the solvers' refreshes visit every node (on) or only those that can
// have changed (off, the default).
func VisitEveryNode(on bool) { visitEveryNode = on }
