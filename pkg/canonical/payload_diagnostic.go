package canonical

import "encoding/json"

// ConfigWarning is the payload of config.warning.
type ConfigWarning struct {
	// Summary is the warning in one line.
	Summary string `json:"summary"`
	// Details adds detail.
	Details string `json:"details,omitempty"`
	// Path is the configuration file concerned.
	Path string `json:"path,omitempty"`
	// Range is the place in the file, as the provider sent it.
	Range json.RawMessage `json:"range,omitempty"`
}

// DeprecationNotice is the payload of deprecation.notice.
type DeprecationNotice struct {
	// Summary is the notice in one line.
	Summary string `json:"summary"`
	// Details adds detail.
	Details string `json:"details,omitempty"`
}

// FilesPersisted is the payload of files.persisted.
type FilesPersisted struct {
	// Files lists the files stored.
	Files []PersistedFile `json:"files"`
	// Failed lists the files that could not be stored.
	Failed []FailedFile `json:"failed,omitempty"`
}

// PersistedFile is a file the provider stored.
type PersistedFile struct {
	// Filename is the local file name.
	Filename string `json:"filename"`
	// FileID is the provider's id for the stored file.
	FileID string `json:"fileId"`
}

// FailedFile is a file the provider could not store.
type FailedFile struct {
	// Filename is the local file name.
	Filename string `json:"filename"`
	// Error says why.
	Error string `json:"error"`
}

// RuntimeWarning is the payload of runtime.warning.
type RuntimeWarning struct {
	// Message is the warning in one line.
	Message string `json:"message"`
	// Detail is structured detail (for an unmapped frame: its kind).
	Detail json.RawMessage `json:"detail,omitempty"`
}

// RuntimeError is the payload of runtime.error.
type RuntimeError struct {
	// Message is the error in one line.
	Message string `json:"message"`
	// Class classifies the error.
	Class ErrorClass `json:"class,omitempty"`
	// Detail is structured detail (the provider's error object, the decode error).
	Detail json.RawMessage `json:"detail,omitempty"`
}

func (*ConfigWarning) Kind() Kind     { return KindConfigWarning }
func (*DeprecationNotice) Kind() Kind { return KindDeprecationNotice }
func (*FilesPersisted) Kind() Kind    { return KindFilesPersisted }
func (*RuntimeWarning) Kind() Kind    { return KindRuntimeWarning }
func (*RuntimeError) Kind() Kind      { return KindRuntimeError }

func (*ConfigWarning) isPayload()     {}
func (*DeprecationNotice) isPayload() {}
func (*FilesPersisted) isPayload()    {}
func (*RuntimeWarning) isPayload()    {}
func (*RuntimeError) isPayload()      {}
