//! The crate's global allocator: the system's, except that a block of 2 MB or more is 2 MB-aligned and, on Linux,
//! advised into transparent huge pages before its first write. jieba-rs's dictionary tables and the token cache are
//! such blocks, read at random by every text segmented: in huge pages a look-up is no TLB miss, and building them
//! takes one page fault per 2 MB instead of one per 4 KB.

use std::alloc::{GlobalAlloc, Layout, System};

pub const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
}

pub struct HugePageAlloc;

impl HugePageAlloc {
    #[inline]
    fn big(layout: Layout) -> Option<Layout> {
        if layout.size() >= HUGE_PAGE {
            Layout::from_size_align(layout.size(), layout.align().max(HUGE_PAGE)).ok()
        } else {
            None
        }
    }

    unsafe fn advise(p: *mut u8, size: usize) {
        #[cfg(target_os = "linux")]
        if !p.is_null() {
            const MADV_HUGEPAGE: std::ffi::c_int = 14;
            madvise(p.cast(), size, MADV_HUGEPAGE); // (only advice: its failure changes nothing)
        }
    }
}

unsafe impl GlobalAlloc for HugePageAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::big(layout) {
            Some(big) => {
                let p = System.alloc(big);
                Self::advise(p, big.size());
                p
            }
            None => System.alloc(layout),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::big(layout) {
            Some(big) => {
                let p = System.alloc(big);
                if !p.is_null() {
                    Self::advise(p, big.size());
                    std::ptr::write_bytes(p, 0, big.size());
                }
                p
            }
            None => System.alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, Self::big(layout).unwrap_or(layout))
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, layout.align());
        if Self::big(layout).is_none() && Self::big(new).is_none() {
            return System.realloc(p, layout, new_size);
        }
        let q = self.alloc(new);
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
            self.dealloc(p, layout);
        }
        q
    }
}
