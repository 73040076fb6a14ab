output "vpc_id" {
  description = "ID of the VPC."
  value       = "vpc-${var.name}"
}

output "subnet_ids" {
  description = "IDs of the subnets."
  value       = [for s in var.subnets : "subnet-${s.name}"]
}

output "cidr_block" {
  value = var.cidr_block
}
