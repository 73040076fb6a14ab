package v1alpha1

// Event reasons the appdef controller records on ApplicationDefinitions.
const (
	// EventCRDCreated: the CRD serving the kind was created.
	EventCRDCreated = "CRDCreated"
	// EventCRDUpdated: the CRD was brought to the definition's new schema.
	EventCRDUpdated = "CRDUpdated"
	// EventCRDCorrected: someone changed the CRD; it was put back.
	EventCRDCorrected = "CRDCorrected"
	// EventCRDDeleted: the deleted definition's CRD was deleted, no
	// instance of its kind being left.
	EventCRDDeleted = "CRDDeleted"
	// EventPolicyUpdated: the instance keys policy now covers another set
	// of free-form kinds.
	EventPolicyUpdated = "PolicyUpdated"
	// EventPolicyCorrected: someone changed the instance keys policy; it
	// was put back.
	EventPolicyCorrected = "PolicyCorrected"
	// EventRolePublished: an aggregated ClusterRole of the kind was
	// created, updated or put back.
	EventRolePublished = "RolePublished"
	// EventRoleDeleted: an aggregated ClusterRole the definition no longer
	// wants was deleted.
	EventRoleDeleted = "RoleDeleted"
	// EventRoleNotOwned (warning): a ClusterRole with the name of one of the
	// kind's roles exists and the definition does not control it.
	EventRoleNotOwned = "RoleNotOwned"
	// EventStalled (warning): the definition stalled for a new reason; the
	// note says what to fix.
	EventStalled = "Stalled"
	// EventServed: the kind became served (Ready=True).
	EventServed = "Served"
	// EventDeletionWaiting: the definition is deleted, and its deletion
	// waits until no instance of its kind is left.
	EventDeletionWaiting = "DeletionWaiting"
	// EventReleased: nothing holds the deleted definition any more; its
	// finalizer was removed.
	EventReleased = "Released"
)

// Event reasons the backend controllers (helm, terraform) record on
// ApplicationDefinitions.
const (
	// EventInstancesUpdated: backing objects of the definition's instances
	// were brought to the desired state after a change outside the
	// instances (the definition's backend, or a new controller version).
	// One series per definition and controller: its count is the number of
	// backing objects updated. A change that follows an instance's own spec
	// is recorded on the instance instead (Updated).
	EventInstancesUpdated = "InstancesUpdated"
)

// Event reasons the appdef controller records on tenant namespaces, about
// their instance quota.
const (
	// EventQuotaWritten: the namespace's default quota was created or
	// brought to new limits.
	EventQuotaWritten = "InstanceQuotaWritten"
	// EventQuotaDeleted: no limit is wanted any more (annotations or
	// flags); the controller's quota was deleted.
	EventQuotaDeleted = "InstanceQuotaDeleted"
	// EventQuotaNotOwned (warning): a ResourceQuota at Name is someone
	// else's; it is left untouched.
	EventQuotaNotOwned = "InstanceQuotaNotOwned"
	// EventInvalidAnnotation (warning): a quota annotation of the
	// namespace cannot be read; the quota is left as it is.
	EventInvalidAnnotation = "InvalidInstanceQuotaAnnotation"
	// EventUsageCounted: the quota enforced a kind that the quota
	// controller had not counted yet, which refuses every create of it;
	// the controller counted the instances and wrote the usage (see
	// MissingUsage).
	EventUsageCounted = "InstanceQuotaUsageCounted"
)
