variable "zone_name" {
  description = "Fully qualified name of the zone, without the trailing dot."
  type        = string

  validation {
    condition     = can(regex("^([a-z0-9]([-a-z0-9]*[a-z0-9])?\\.)+[a-z]{2,}$", var.zone_name))
    error_message = "zone_name must be a DNS name such as example.com."
  }

  validation {
    condition     = length(var.zone_name) <= 253
    error_message = "DNS names have at most 253 characters."
  }
}

variable "ttl" {
  description = "Default TTL of the records, in seconds."
  type        = number
  default     = 300

  validation {
    condition     = var.ttl >= 60 && var.ttl <= 86400
    error_message = "TTL between a minute and a day."
  }
}

variable "records" {
  description = "Records of the zone, by name."
  type = map(object({
    type   = string
    values = list(string)
    ttl    = optional(number)
  }))
  default = {}

  validation {
    condition     = alltrue([for r in var.records : contains(["A", "AAAA", "CNAME", "MX", "TXT"], r.type)])
    error_message = "Unsupported record type."
  }
}

variable "dnssec" {
  type    = bool
  default = false
}

variable "primary_ns" {
  description = "Primary name server and its port."
  type        = tuple([string, string])
  default     = ["ns1.example.net", "53"]
}

variable "labels" {
  description = "Free-form labels."
  type        = any
  default     = {}
}

output "name_servers" {
  description = "Name servers of the zone."
  value       = ["ns1.example.net", "ns2.example.net"]
}

output "zone_id" {
  value = "zone-${var.zone_name}"
}
