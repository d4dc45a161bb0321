//! Black-box tests: each starts the real owner on 127.0.0.1:0 and drives it over HTTP.

mod anchors;
mod autostart;
mod backup;
mod battery;
mod bridge;
mod build_inputs;
mod cli;
mod clients;
mod common;
mod conformance;
mod connect;
mod design;
mod faults;
mod fuzz;
#[path = "../../xtask/src/gitcmd.rs"]
mod gitcmd;
mod guarantees;
mod hall;
mod hall_assets;
mod hall_review;
mod hints;
mod hooks;
mod import_from;
mod live;
mod mcp;
mod model_switch;
mod near_duplicates;
mod nudge;
mod owner;
mod peer;
#[path = "../../xtask/src/pg.rs"]
mod pg;
mod projects;
mod python;
mod readme;
mod recall;
mod release;
mod repository;
mod retire;
mod review;
mod service;
mod team;
mod team_live;
mod team_projects;
mod tend;
mod transfer;
