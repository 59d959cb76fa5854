package tabstate

import "sync"

// Later is a value made the first time it is asked for and kept: the
// part of a run that only some pages draw (the Envoy/gRPC strip's run
// under the other dialect). Tabs that ask together wait for one build, as
// the run cache's do. A nil Later keeps nothing: each ask builds.
type Later struct {
	once sync.Once
	v    any
}

// Get is the value, built by build on the first ask.
func (l *Later) Get(build func() any) any {
	if l == nil {
		return build()
	}
	l.once.Do(func() { l.v = build() })
	return l.v
}
