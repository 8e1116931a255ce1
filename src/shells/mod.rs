//! The shells: the record of every command we started and the table that
//! holds them.

pub(crate) mod table;
