//! The integration tests, in one binary: one link instead of one per file, and one pool of
//! test threads, so a file with a few long tests no longer leaves the other core idle.

mod common;

mod agui_check;
mod agui_faults;
mod broken_input;
mod cli_check;
mod cli_hostile;
mod cli_usage;
mod client_runs;
mod config_file;
mod corpus;
mod fast_path;
mod forged_observations;
mod fuzz_live;
mod fuzz_targets;
mod gen_properties;
mod golden_reports;
mod haip_faults;
mod hpd_faults;
mod hpd_hostile;
mod hpd_reference;
mod html_report;
mod huma_faults;
mod huma_runner;
mod layers;
mod node_interop;
mod nuum_faults;
mod nuum_hostile;
mod planted_clients;
mod protocol_shape;
mod proxy;
mod reports;
mod rule_ids;
mod shards;
mod stdio_runner;
mod suite_files;
mod switch_names;
mod tls;
mod transport_socketio;
mod transport_stdio;
mod transport_ws;
mod uae_faults;
mod variants;
mod verdicts_hold;
mod waits;
