//! The admission plugins of a default kube-apiserver that change or refuse
//! objects and need no external component, as pure functions over the
//! objects the API layer reads for them.
