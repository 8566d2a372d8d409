//! The edges: Kafka (embedded broker, client settings, dead letters) and HTTP.

pub mod broker;
pub mod dead_letters;
pub mod http;
pub mod kafka;
pub mod openapi;
