//! wire types
