import HearthClient

extension Storage {
    /// Removes the files of `photos` (each full image and thumbnail), as far as it can: a file
    /// already gone, or one that cannot be reached, is left (nothing points at it any more).
    func removeFiles(of photos: [Photo]) async {
        for photo in photos {
            try? await reference(photo.full).delete()
            try? await reference(photo.thumb).delete()
        }
    }
}
