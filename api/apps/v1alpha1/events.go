package v1alpha1

// Event reasons the backend controllers record on instances (the
// ReasonResumed event and the transitions of the conditions aside).
const (
	// EventCreated (Normal): the backing object was created.
	EventCreated = "Created"
	// EventUpdated (Normal): the backing object was brought to the desired
	// state after the instance (or its definition) changed.
	EventUpdated = "Updated"
	// EventDriftCorrected (Normal): someone else changed fields of the
	// backing object this controller manages; they were put back.
	EventDriftCorrected = "DriftCorrected"
	// EventTakeoverRefused (Warning): an object at the backing object's
	// name is not this instance's; it is left untouched
	// (ReasonBackingObjectNotOwned).
	EventTakeoverRefused = "TakeoverRefused"
	// EventAdopted (Normal): an existing backing object was adopted, as the
	// adoption annotation allows.
	EventAdopted = "Adopted"
	// EventInvalidSpec (Warning): the spec cannot be encoded for the
	// backend (ReasonInvalidSpec).
	EventInvalidSpec = "InvalidSpec"
	// EventApplyFailed (Warning): the API server refused the backing object
	// (ReasonApplyFailed).
	EventApplyFailed = "ApplyFailed"
	// EventSuspended (Normal): the instance's suspend annotation set
	// spec.suspend=true on the backing object.
	EventSuspended = ReasonSuspended
	// EventResumed (Normal): spec.suspend=false again on the backing object.
	EventResumed = ReasonResumed
	// EventBackingObjectDeleted (Normal): a deleted instance's backend
	// deleted the backing object the instance owned, and the object stays
	// while its finalizers hold it (tofu-controller destroying the
	// resources); the instance is Deleting meanwhile. An object removed at
	// once is not recorded: the instance goes in the same pass.
	EventBackingObjectDeleted = "BackingObjectDeleted"
	// EventOutputsNotCopied (Warning): the Terraform backend could not copy
	// the module's outputs Secret into the instance's namespace; the note
	// says why.
	EventOutputsNotCopied = "OutputsNotCopied"
)
