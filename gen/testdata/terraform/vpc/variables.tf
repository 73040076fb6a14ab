variable "name" {
  description = "Name of the VPC, used as a prefix for its resources."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "The name must be 2-31 lower-case letters, digits and dashes, starting with a letter."
  }
}

variable "cidr_block" {
  description = "IPv4 CIDR block of the VPC."
  type        = string
  default     = "10.0.0.0/16"

  validation {
    condition     = can(cidrhost(var.cidr_block, 0))
    error_message = "cidr_block must be a valid IPv4 CIDR block."
  }
}

variable "region" {
  description = "Cloud region."
  type        = string

  validation {
    condition     = contains(["eu-central-1", "eu-west-1", "us-east-1"], var.region)
    error_message = "Unsupported region."
  }
}

variable "availability_zones" {
  description = "Availability zones to spread the subnets over."
  type        = list(string)
  default     = ["a", "b"]

  validation {
    condition     = length(var.availability_zones) >= 1 && length(var.availability_zones) <= 6
    error_message = "Between 1 and 6 zones."
  }
}

variable "subnets" {
  description = "Subnets to create."
  type = list(object({
    name       = string
    cidr_block = string
    public     = optional(bool, false)
    zone       = optional(string)
    tags       = optional(map(string), {})
  }))
  default = []

  validation {
    condition     = alltrue([for s in var.subnets : can(regex("^[a-z0-9-]+$", s.name))])
    error_message = "Subnet names are lower-case letters, digits and dashes."
  }
}

variable "nat_gateway" {
  description = "NAT gateway settings."
  type = object({
    enabled = bool
    mode    = optional(string, "single")
    eips    = optional(number, 1)
  })
  default = {
    enabled = true
  }

  validation {
    condition     = var.nat_gateway.eips >= 1 && var.nat_gateway.eips <= 3
    error_message = "One to three EIPs."
  }
}

variable "tags" {
  description = "Tags on every resource."
  type        = map(string)
  default     = {}

  validation {
    condition     = length(var.tags) <= 20
    error_message = "At most 20 tags."
  }
}

variable "enable_dns_hostnames" {
  type    = bool
  default = true
}

variable "flow_logs_retention_days" {
  description = "Retention of the flow logs; null disables them."
  type        = number
  default     = null
  nullable    = true

  validation {
    condition     = var.flow_logs_retention_days == null || var.flow_logs_retention_days > 0
    error_message = "Retention must be positive."
  }
}

variable "secondary_cidr_blocks" {
  description = "Additional CIDR blocks."
  type        = set(string)
  default     = []

  validation {
    condition     = alltrue([for c in var.secondary_cidr_blocks : can(cidrnetmask(c))])
    error_message = "Each secondary block must be a CIDR block."
  }
}

variable "ipv6" {
  description = "Assign an IPv6 block."
  type        = bool
  default     = false

  validation {
    condition     = !var.ipv6 || var.region != "us-east-1"
    error_message = "IPv6 is not offered in us-east-1."
  }
}
