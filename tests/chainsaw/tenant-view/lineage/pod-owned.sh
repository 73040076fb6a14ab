#!/usr/bin/env bash
# The Pod the Job postgres-db-init-job would make: no helm-controller labels
# of its own (the post-renderer labels the Job, not its pod template), a
# controller reference to the Job, as the job controller writes it.
set -euo pipefail
ns=tenant-e2elineage
uid=$(kubectl -n "$ns" get job postgres-db-init-job -o jsonpath='{.metadata.uid}')
kubectl -n "$ns" apply -f - <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: postgres-db-init-job-x1
  namespace: ${ns}
  labels:
    job-name: postgres-db-init-job
  ownerReferences:
  - apiVersion: batch/v1
    kind: Job
    name: postgres-db-init-job
    uid: ${uid}
    controller: true
    blockOwnerDeletion: true
spec:
  automountServiceAccountToken: false
  restartPolicy: OnFailure
  containers:
  - name: postgres
    image: postgres:17
YAML
