//! Temporary stand-in for the glommio DMA directory (replaced on merge).
use crate::log::{LogDirectory, LogError, LogFile};
pub struct DmaDirectory;
pub struct NullFile;
impl DmaDirectory {
    pub async fn new(_path: std::path::PathBuf) -> Result<DmaDirectory, LogError> { Ok(DmaDirectory) }
}
impl LogDirectory for DmaDirectory {
    type File = NullFile;
    async fn list(&self) -> Result<Vec<String>, LogError> { Ok(vec![]) }
    async fn open(&self, _n: &str) -> Result<NullFile, LogError> { Ok(NullFile) }
    async fn read_all(&self, _n: &str) -> Result<Vec<u8>, LogError> { Ok(vec![]) }
    async fn remove(&self, _n: &str) -> Result<(), LogError> { Ok(()) }
    async fn rename(&self, _f: &str, _t: &str) -> Result<(), LogError> { Ok(()) }
    async fn sync_directory(&self) -> Result<(), LogError> { Ok(()) }
}
impl LogFile for NullFile {
    async fn write_at(&self, _o: u64, _d: &[u8]) -> Result<(), LogError> { Ok(()) }
    async fn sync(&self) -> Result<(), LogError> { Ok(()) }
    async fn truncate(&self, _l: u64) -> Result<(), LogError> { Ok(()) }
    async fn close(self) -> Result<(), LogError> { Ok(()) }
    fn alignment(&self) -> u64 { 4096 }
}
