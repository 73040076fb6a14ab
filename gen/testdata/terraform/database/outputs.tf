output "endpoint" {
  description = "Host name of the database."
  value       = "db.internal"
}

output "port" {
  value = 5432
}

output "master_password" {
  description = "Password of the master user."
  value       = var.master_password
  sensitive   = true
}

output "connection_string" {
  description = "libpq connection string."
  value       = "postgres://${var.master_username}@db.internal:5432/postgres"
  sensitive   = true
}
