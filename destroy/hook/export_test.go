package hook

// Shorthands only the tests call.

// Find returns the destroy hooks of an object whose class hierarchy is
// classes (the object's class, then its ancestors in breadth-first order,
// as the caller resolved them), looking in the hooks dirs in order: for
// each class in turn, <dir>/<class>/destroy in each dir. See [FindSources]
// for the rules; Find(dirs, classes) is FindSources(classes,
// Sources(dirs, nil)).
func Find(dirs []string, classes []string) []Found {
	return FindSources(classes, Sources(dirs, nil))
}

// FindHandler returns the hook of handler for a subscriber whose class
// hierarchy is classes: the first <dir>/<class>/notify/<handler>, and
// false when there is none. See [FindHandlerSources].
func FindHandler(dirs []string, classes []string, handler string) (Found, bool) {
	return FindHandlerSources(classes, handler, Sources(dirs, nil))
}
