variable "engine_version" {
  description = "PostgreSQL major version."
  type        = string
  default     = "16"

  validation {
    condition     = contains(["14", "15", "16", "17"], var.engine_version)
    error_message = "Supported versions: 14 to 17."
  }
}

variable "instance_class" {
  description = "Instance class."
  type        = string
  default     = "db.t3.medium"

  validation {
    condition     = startswith(var.instance_class, "db.")
    error_message = "Instance classes start with db."
  }
}

variable "storage_gb" {
  description = "Allocated storage in GiB."
  type        = number
  default     = 20

  validation {
    condition     = var.storage_gb >= 20 && var.storage_gb <= 16384
    error_message = "Between 20 GiB and 16 TiB."
  }
}

variable "master_username" {
  description = "Name of the master user."
  type        = string
  default     = "postgres"

  validation {
    condition     = var.master_username != ""
    error_message = "The master user needs a name."
  }
}

variable "master_password" {
  description = "Password of the master user; generated when null."
  type        = string
  default     = null
  sensitive   = true
}

variable "backup" {
  description = "Automated backups."
  type = object({
    retention_days = optional(number, 7)
    window         = optional(string, "03:00-04:00")
  })
  default = {}
}

variable "allowed_cidrs" {
  description = "Networks allowed to connect."
  type        = list(string)
  default     = []
}

variable "deletion_protection" {
  type     = bool
  default  = true
  nullable = false
}
