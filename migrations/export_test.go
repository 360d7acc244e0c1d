package migrations

// CheckServer is Up's check of the server's version, with the least
// version a test asks for.
var CheckServer = checkServer

// UpTo is Up stopping after version last.
var UpTo = upTo
