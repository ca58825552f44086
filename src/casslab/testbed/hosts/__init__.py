"""Real hosts: the inventory of machines a lab runs on when one machine is not enough."""
