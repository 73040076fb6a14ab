terraform {
  required_version = ">= 1.6"
}

locals {
  zones = var.availability_zones
}

resource "terraform_data" "vpc" {
  input = {
    name  = var.name
    cidr  = var.cidr_block
    zones = local.zones
  }
}
